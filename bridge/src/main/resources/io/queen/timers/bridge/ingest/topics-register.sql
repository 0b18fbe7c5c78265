-- Which tenant each command topic of this group stands for, registered at start (queen.bridge_topics).
SELECT queen.bridge_topics_register_v1(?, ?, ?::uuid[])
