"""Helpers that drive a real headless Chromium for the HTML viewer's tests (stdlib only)."""
