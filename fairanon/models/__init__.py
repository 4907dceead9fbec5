"""Requirements, the measures they are made of, metrics and the verifier."""
