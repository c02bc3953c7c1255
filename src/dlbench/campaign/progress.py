"""The GPU campaign's progress lines: each stamped with the time of day and
flushed at once, since they are read from a log while the campaign runs."""

import time


def say(message):
    print("[gpu campaign {}] {}".format(time.strftime("%H:%M:%S"), message), flush=True)
