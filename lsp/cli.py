x = 1
def main(): print('ok')
