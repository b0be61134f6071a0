
€€€€€€€€@	/host:CPU