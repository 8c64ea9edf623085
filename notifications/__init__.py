"""Outgoing notifications: signed events (Standard Webhooks) posted to operators' URLs."""
