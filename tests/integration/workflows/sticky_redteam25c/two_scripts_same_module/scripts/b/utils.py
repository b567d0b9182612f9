WHO = "b"
