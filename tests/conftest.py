"""Every property test in the suite is deterministic: one hypothesis profile for all of them.

``derandomize=True`` draws the examples from a seed fixed by each test's own code, and
``database=None`` keeps no examples between runs, so the README's test command gives the same
result on every machine and every run. A test's own ``@settings(...)`` inherits these (it sets
only what it names, such as ``max_examples``). ``deadline=None``: the shared 2-core machines
time one example differently from run to run, and a timing is not what these tests assert.
"""

from hypothesis import settings

settings.register_profile("evalspec", derandomize=True, database=None, deadline=None, print_blob=True)
settings.load_profile("evalspec")
