"""Background temperature T_bg: calibrate the hidden randomness of a system under test.

After "Introducing Background Temperature to Characterise Hidden Randomness in Large
Language Models" (Alberto Messina and Stefano Scotta), sections 5-7: a stable local
reference model is sampled over a temperature grid (:mod:`evalspec.tbg.sampler`), the
spread of its answers per prompt is measured (:mod:`evalspec.tbg.metrics`), and the
temperature whose spread distribution is closest in Kolmogorov-Smirnov distance to the
system's at nominal T = 0 is its equivalent temperature (:mod:`evalspec.tbg.estimate`).

Only :mod:`evalspec.tbg.models` and :mod:`evalspec.tbg.sampler` need torch (imported
inside their functions); metrics and the estimator are numpy only.
"""
