role = "user"
if role != "admin‮ ⁦# check admin⁩ ⁦":
    print('ok')
