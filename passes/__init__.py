"""One module per pass; `registry` maps pass names to them."""
