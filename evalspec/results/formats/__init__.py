"""One module per results table format: :mod:`.jsonl`, :mod:`.csv`, :mod:`.parquet`.

One definition of what a file means, whichever path reads it
---------------------------------------------------------------
JSONL and CSV have two paths: a vectorised one (pyarrow) that keeps a million-row file
cheap, and an exact line-by-line Python one that stops at the first bad line with its
number. The fast path is only taken where it is known to give the same values; anything
unusual (carriage returns, blank lines, quotes in CSV, integers beyond 2**53 that Arrow
would turn into floats, values Arrow refuses) goes to the exact path. The same rules hold
on both (a property test reads generated files both ways and compares):

* a leading UTF-8 byte-order mark is ignored; the text must be UTF-8 (a bad byte is an
  error at its line);
* lines end at ``\\n`` (an optional ``\\r`` before it is dropped); U+0085, U+2028 and U+2029
  inside a string are characters, not line ends;
* a whole number is an ``int`` (exact at any size); a float with an integral value below
  2**53 becomes the same ``int`` (``2.0`` and ``2`` are one value), other floats stay
  floats; JSON ``NaN`` is missing;
* a JSON object naming a key twice is an error at its line (which value was meant?);
* Parquet ``binary`` values are decoded as UTF-8 text; native Parquet timestamps and
  dates become ISO 8601 text (timestamps without a zone are taken as UTC).

Only regular files are read (a named pipe or a device is refused, so a run never hangs),
and at most :data:`~evalspec.limits.MAX_RESULTS_BYTES` bytes of each.

Each format's reader takes a scanned :class:`~evalspec.results.files.Source` (or bytes) and
returns ``(columns, lines, unit)``; :mod:`evalspec.results.readers` dispatches to them.
"""
