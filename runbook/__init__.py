"""The runbook's build stages: read content, parse the dialect, compute, render, inline, write."""
