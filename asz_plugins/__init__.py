"""Built-in plugins that are not sources (export, reporting). They load through the
``asz.plugins`` entry points; ``asz_core`` never imports them."""
