# /// script
# dependencies = ["requests"]
# ///
import requests
