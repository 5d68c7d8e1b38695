"""The adversarial suite: isolation, secrets, crashes, grammar fuzz, hostile input (issue 9)."""
