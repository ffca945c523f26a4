# Lists x402 resources from agentindex's `GET /discovery/resources` with the x402 Python
# package's own Bazaar client (`with_bazaar` over `HTTPFacilitatorClientSync`), for
# tests/x402_bazaar.rs. Reads one job on stdin: {"url": the server's base URL, "calls": [{"name",
# "params": {type, pay_to, scheme, network, extensions, limit, offset}}]}; prints
# {"results": {name: {"x402Version", "items", "pagination"} or {"error": message}}}.
import json
import sys

from x402.extensions.bazaar import ListDiscoveryResourcesParams, with_bazaar
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync


def main():
    job = json.load(sys.stdin)
    client = with_bazaar(HTTPFacilitatorClientSync(FacilitatorConfig(url=job["url"])))
    results = {}
    for call in job["calls"]:
        try:
            listed = client.extensions.bazaar.list_resources(
                ListDiscoveryResourcesParams(**call.get("params", {}))
            )
            results[call["name"]] = {
                "x402Version": listed.x402_version,
                "items": [item.to_dict() for item in listed.items],
                "pagination": vars(listed.pagination),
            }
        except Exception as exc:  # one refused call must not stop the others
            results[call["name"]] = {"error": f"{type(exc).__name__}: {exc}"}
    json.dump({"results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
