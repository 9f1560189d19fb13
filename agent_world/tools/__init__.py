"""Things agents call: mining sources, the sandbox, SQL helpers."""
