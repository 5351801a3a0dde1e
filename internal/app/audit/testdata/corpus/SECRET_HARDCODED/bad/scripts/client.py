import requests
GITHUB_TOKEN = "ghp_R7kQ2mX9vL4pT8wZ3nB6cY1dF5hJ0sA2eG4i"
