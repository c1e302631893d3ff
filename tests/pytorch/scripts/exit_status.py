"""Ends as its first argument says: os._exit N, sys.exit N, sys.exit text, raise."""
import os
import sys
import threading

how, arg = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
if how == "os_exit_thread":
    t = threading.Thread(target=lambda: os._exit(int(arg)))
    t.start()
    t.join()
elif how == "os_exit":
    os._exit(int(arg))
elif how == "sys_exit":
    sys.exit(int(arg) if arg.isdigit() else arg)
elif how == "raise":
    raise RuntimeError(arg)
