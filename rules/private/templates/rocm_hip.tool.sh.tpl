#!/bin/sh
exec {TOOL} "$@"
