"""``evalspec audit``: is this claim what the team promised to do, and does it reproduce?"""
