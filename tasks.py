"""Entry point for `invoke` in a rocmforge checkout: the kit's collection is the root namespace."""

from rocmforge.tasks import ns

__all__ = ["ns"]
