import base64
print(base64.b64decode('aGk=').decode())
