"""Model definitions: each workload once per API (Keras here; native
frameworks get their own modules)."""
