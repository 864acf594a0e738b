"""(being written) Relay text parser."""


def parse(text, source_name=""):
    raise NotImplementedError


def parse_expr(text):
    raise NotImplementedError
