import os
GITHUB_TOKEN = os.environ["GITHUB_TOKEN"]
