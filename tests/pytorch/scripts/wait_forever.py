"""Cannot finish even natively: a thread waits on an Event nobody sets."""
import threading

never = threading.Event()
t = threading.Thread(target=never.wait, name="waits-forever")
t.start()
t.join()
