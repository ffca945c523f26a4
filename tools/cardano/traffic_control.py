"""What stands between a Blockfrost request and its answer, and what is counted about it: the
`project_id` header check (403), a token bucket like Blockfrost's (R requests per second after a
burst of B; over budget: 429), injected faults (the next N requests under a path prefix answered
with a chosen status), and the statistics the control API reports (requests, per route, errors
served, schema validation failures)."""

import threading
import time


class TokenBucket:
    def __init__(self, rate: float, burst: int):
        self.rate = rate
        self.capacity = burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                return True
            return False


class TrafficControl:
    def __init__(self, project_id: str | None, rate: float | None, burst: int | None):
        self.project_id = project_id
        self.bucket = TokenBucket(rate, burst or max(1, int(rate))) if rate else None
        self.lock = threading.Lock()
        self.faults: list = []  # [{status, remaining, path_prefix}]
        self.reset_stats()

    def reset_stats(self) -> None:
        with self.lock:
            self.requests = 0
            self.by_route: dict = {}
            self.errors_served: dict = {}
            self.validation_failures: list = []
            self.validated = 0

    def add_fault(self, status: int, count: int, path_prefix: str | None) -> None:
        with self.lock:
            self.faults.append({"status": status, "remaining": count, "path_prefix": path_prefix or ""})

    def admit(self, path: str, headers) -> tuple | None:
        """None to serve the request, else (status, message) to answer it with."""
        with self.lock:
            self.requests += 1
        if self.project_id is not None:
            given = headers.get("project_id")
            if given is None:
                return 403, "Missing project token. Please include project_id in your request."
            if given != self.project_id:
                return 403, "Invalid project token."
        bare = path[len("/api/v0"):] if path.startswith("/api/v0/") else path
        with self.lock:
            for fault in self.faults:
                if fault["remaining"] > 0 and bare.startswith(fault["path_prefix"]):
                    fault["remaining"] -= 1
                    self.faults = [f for f in self.faults if f["remaining"] > 0]
                    return fault["status"], None
        if self.bucket is not None and not self.bucket.take():
            return 429, None
        return None

    def record(self, template: str | None, status: int, validation_error: str | None, validated: bool, path: str) -> None:
        with self.lock:
            name = template or "(unknown route)"
            self.by_route[name] = self.by_route.get(name, 0) + 1
            if status >= 400:
                self.errors_served[str(status)] = self.errors_served.get(str(status), 0) + 1
            if validated:
                self.validated += 1
            if validation_error is not None:
                self.validation_failures.append({"path": path, "status": status, "error": validation_error})

    def stats(self) -> dict:
        with self.lock:
            return {
                "requests": self.requests,
                "by_route": dict(self.by_route),
                "errors_served": dict(self.errors_served),
                "validation_failures": list(self.validation_failures),
                "validated": self.validated,
                "pending_faults": [dict(f) for f in self.faults],
            }
