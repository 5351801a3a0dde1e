import os
state = open(os.path.expanduser("~/.config/weather/state.json")).read()
