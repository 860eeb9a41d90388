# Owned by the fuzz harnesses; see fuzz/README.md.
