"""Pinned sources outside the process: files (no links, within the roots), web pages (SSRF-guarded), their watch."""
