"""The holdout: does injecting lessons pay, measured on the user's own sessions?

`arms` gives each session its arm (the hooks' one check), `outcomes` reads each session's outcomes
from what was captured, `stats` holds the small-sample intervals, `report` compares the arms.
Nothing here is imported at hook start: `arms` is imported by an injecting hook only while an
experiment runs (`inject.holdout` > 0).
"""
