#!/usr/bin/env python3
"""A local OTLP/HTTP trace receiver for the tests (tests/cli/helpers/otlp.rs).

Decodes every POST with the OpenTelemetry project's own protocol definitions (the
`opentelemetry-proto` package: ExportTraceServiceRequest), binary protobuf or the OTLP JSON
mapping, and appends one JSON line per request to OUT: the path, the headers (as a dict, and
as the list of every header line, repeated names kept) and the request as a dict, with trace and span ids in lowercase hex. Listens on 127.0.0.1, on a free port it
writes to PORT_FILE once it listens.

Usage: otlp_receiver.py PORT_FILE OUT [answer|silent|status:NNN]
  answer      answer 200 with an empty ExportTraceServiceResponse (the default)
  silent      accept the connection and read the request, but never answer
  status:NNN  answer with status NNN
"""

import base64
import json
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

ID_KEYS = ("traceId", "spanId", "parentSpanId")


def ids_to_hex(node, to_hex):
    """Rewrites the id fields of every span and link in `node` (in place)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_KEYS and isinstance(value, str):
                node[key] = to_hex(value)
            else:
                ids_to_hex(value, to_hex)
    elif isinstance(node, list):
        for item in node:
            ids_to_hex(item, to_hex)


def decode(content_type, body):
    request = ExportTraceServiceRequest()
    if content_type.startswith("application/json"):
        data = json.loads(body)
        # OTLP JSON writes ids in hex; protobuf's JSON mapping reads bytes as base64.
        ids_to_hex(data, lambda h: base64.b64encode(bytes.fromhex(h)).decode())
        json_format.ParseDict(data, request)
    else:
        request.ParseFromString(body)
    as_dict = json_format.MessageToDict(request)
    ids_to_hex(as_dict, lambda b: base64.b64decode(b).hex())
    return as_dict


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        content_type = self.headers.get("Content-Type", "")
        mode = self.server.mode
        try:
            request = decode(content_type, body)
            error = None
        except Exception as e:  # recorded for the test to see
            request, error = None, repr(e)
        record = {
            "path": self.path,
            "content_type": content_type,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "header_list": [[k.lower(), v] for k, v in self.headers.items()],
            "request": request,
            "error": error,
        }
        with self.server.lock:
            with open(self.server.out, "a") as out:
                out.write(json.dumps(record) + "\n")
        if mode == "silent":
            time.sleep(3600)
            return
        status = int(mode.split(":")[1]) if mode.startswith("status:") else 200
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


def main():
    port_file, out = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else "answer"
    server = Server(("127.0.0.1", 0), Handler)
    server.out, server.mode, server.lock = out, mode, threading.Lock()
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
