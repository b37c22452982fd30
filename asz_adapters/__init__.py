"""The built-in adapters, one package each. They load through the ``asz.adapters`` entry
points, exactly as a third-party adapter does; ``asz_core`` never imports them."""
