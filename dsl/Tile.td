// Root of the tile dialect's TableGen: everything generated comes from here.
include "dsl/TileOps.td"
