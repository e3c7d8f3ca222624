"""Analytical models the studies compare measurements with.

- :mod:`~tcprepro.models.throughput`: Mathis, Padhye, socket-buffer-limited
  throughput and transfer times (study D);
- :mod:`~tcprepro.models.bandwidth_sharing`: flow-level bandwidth sharing, the
  phi/gamma model of study B.
"""
