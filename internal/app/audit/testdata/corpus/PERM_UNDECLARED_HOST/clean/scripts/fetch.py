import requests
requests.get("https://api.weather.example-data.net/v1/now", timeout=5)
