#!/usr/bin/env python3
"""docs/deploy/nginx-basket.conf with a test run's ports, paths and server name (nginx-check.sh):

    Scripts/nginx-conf.py FOLDER HTTP_PORT HTTPS_PORT UPSTREAM_PORT...

writes FOLDER/basket.conf: the upstream block holds one server per UPSTREAM_PORT on 127.0.0.1,
nginx listens on 127.0.0.1 at the two ports, the certificate is read from FOLDER, and the server
name is localhost.
"""
import re
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    folder, http_port, https_port, *upstream_ports = sys.argv[1:]
    upstreams = "".join(f"    server 127.0.0.1:{port} max_fails=3 fail_timeout=10s;\n" for port in upstream_ports)
    text = open("docs/deploy/nginx-basket.conf", encoding="utf-8").read()
    text = re.sub(r"(upstream basket \{\n(?:\s*#.*\n)*)(?:\s*server 127\.0\.0\.1:\d+[^\n]*\n)+",
                  lambda m: m.group(1) + upstreams, text)
    text = text.replace("listen 80;", f"listen 127.0.0.1:{http_port};")
    text = text.replace("listen 443 ssl", f"listen 127.0.0.1:{https_port} ssl")
    text = text.replace("basket.example.org", "localhost").replace("/etc/ssl/basket/", folder + "/")
    with open(folder + "/basket.conf", "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    main()
