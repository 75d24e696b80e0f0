"""``npcomp download``: each data set's official source (``catalogue.py``),
one file over HTTP, and word vectors kept to the data sets' vocabulary."""
