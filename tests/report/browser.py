"""Headless Debian chromium driven by selenium, for tests and benchmarks/viewer.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
DRIVER_CANDIDATES = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")


def find_browser() -> tuple[str, str] | str:
    """(chromium, chromedriver) paths, or a one-line reason why none can be used."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    browser = next((p for p in CHROMIUM_CANDIDATES if Path(p).exists()), shutil.which("chromium"))
    driver = next((p for p in DRIVER_CANDIDATES if Path(p).exists()), shutil.which("chromedriver"))
    if not browser or not driver:
        return "no chromium + chromedriver found (apt-get install chromium chromium-driver)"
    return browser, driver


def start_browser(width: int = 1280, height: int = 900) -> Any:
    """A headless chromium WebDriver collecting the console log."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_browser()
    if isinstance(found, str):
        raise RuntimeError(found)
    browser, driver = found
    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def console_errors(driver: Any) -> list[str]:
    """Console messages of level SEVERE (JS errors, failed loads) since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
