"""(being written) The Relay prelude."""


class Prelude:
    pass
