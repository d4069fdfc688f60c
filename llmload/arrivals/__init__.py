"""Open-loop arrivals: the schedule (:mod:`.process`) and the dispatcher that sends on it (:mod:`.dispatcher`)."""
