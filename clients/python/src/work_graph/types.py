"""The client's names for the answers that _types.py (generated from the OpenAPI document) names after their procedure."""

from __future__ import annotations

from ._types import AttentionRequestOutput, LeasesClaimOutput, LeasesReleaseOutput

Claim = LeasesClaimOutput
"""What leases.claim answers: the lease, its item, and the questions asked under the item's previous lease."""

Finished = LeasesReleaseOutput
"""What leases.release, leases.cancel and leases.handBack answer: the ended lease and its item."""

Asked = AttentionRequestOutput
"""What attention.request answers: the request, and the lease it ended (None when not blocking)."""
