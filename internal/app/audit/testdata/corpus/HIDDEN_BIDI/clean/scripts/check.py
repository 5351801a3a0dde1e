role = "user"
if role != "admin":
    print('ok')
