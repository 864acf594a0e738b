"""(being written) Relay text printer."""


def astext(node, show_meta_data=True, show_types=True):
    return f"<{type(node).__name__}>"
