"""A request id made here comes from the process's own generator (no system call a request): it
must still differ between the workers a server forks (gunicorn, uvicorn --workers), which start
with their parent's generator state. The standard library reseeds its generator in each child."""

from __future__ import annotations

import os

from mcpsite.logs import request_id_of


def test_a_forked_child_makes_other_request_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        try:
            os.write(write, " ".join(request_id_of({}) for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(write)
    mine = [request_id_of({}) for _ in range(3)]
    with os.fdopen(read) as pipe:
        theirs = pipe.read().split()
    os.waitpid(pid, 0)
    assert len(theirs) == 3 and all(len(made) == 32 for made in theirs + mine)
    assert not set(mine) & set(theirs), (mine, theirs)
