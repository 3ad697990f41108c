"""``python -m homeloop.cli``: the ``homeloop`` command."""

from homeloop.cli import app

if __name__ == "__main__":
    app()
