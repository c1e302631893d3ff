"""The sibling module of main_module.py: imported through sys.path[0]."""
OFFSET = 1
_calls = []


def calls():
    _calls.append(1)
    return len(_calls)
