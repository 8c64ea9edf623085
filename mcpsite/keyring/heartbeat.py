"""Each serving process says, every poll, which version of the key ring it has loaded: that is how
staff (and the promote guard) know a rotation step has reached every process."""

from __future__ import annotations

import os
import socket
import uuid

from django.utils import timezone

from mcpsite.keyring.codec import ring
from mcpsite.models import ProcessHeartbeat

PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
_started = timezone.now()


def heartbeat_beat() -> None:
    ProcessHeartbeat.objects.update_or_create(
        process_id=PROCESS_ID,
        defaults={
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "ring_version": ring.version,
            "ring_kids": ring.kids,
            "started_at": _started,
            "seen_at": timezone.now(),
        },
    )


def heartbeat_forget() -> None:
    ProcessHeartbeat.objects.filter(process_id=PROCESS_ID).delete()
