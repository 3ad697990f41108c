"""The catalog as package data: YAML entries read by :mod:`homeloop.catalog`."""
