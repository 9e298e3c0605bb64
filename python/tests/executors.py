"""Executors the tests run work on."""

from concurrent.futures import Executor, Future


class InThisThread(Executor):
    """Runs each task as it is submitted: the serial reference."""

    def submit(self, fn, /, *args, **kwargs):
        f = Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except Exception as e:  # handed back as a pool would
            f.set_exception(e)
        return f
