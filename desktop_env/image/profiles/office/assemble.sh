#!/bin/sh
# Final assembly of the office profile, after base's, inside the guest root filesystem.
set -eu

chmod 0755 /usr/local/bin/google-chrome /usr/local/bin/code
# `google-chrome` runs as a process named chrome (the suite stops it with `pkill chrome`): a hard link,
# since a process started through a symbolic link takes the name of the link's target.
ln -f /usr/lib/chromium/chromium /usr/lib/chromium/chrome

# GIMP: no Tip of the Day at the first start.
grep -q '^(show-tips no)' /etc/gimp/2.0/gimprc || echo '(show-tips no)' >> /etc/gimp/2.0/gimprc

# VLC's settings from the skeleton (base's assembly copied /etc/skel before these files existed).
mkdir -p /home/user/.config/vlc
cp /etc/skel/.config/vlc/vlcrc /home/user/.config/vlc/vlcrc

# The editor (`code`, code-server): machine-level defaults that keep its first window quiet (no AI chat
# panel, no welcome page, no recommendations); there is no user settings.json, as in a fresh VS Code.
mkdir -p /home/user/.config/Code/Machine
cp /etc/skel/.config/Code/Machine/settings.json /home/user/.config/Code/Machine/settings.json

# code-server's first process forks the server and gives it 10 s to say it started ("error timed out", and
# code-server exits, with no window ever). Under emulation, beside another guest loading its own editor, loading
# the server's modules takes longer: in the office re-proof of 2026-12-06 two VS Code tasks of four lost their
# editor so. Give it 180 s (the same constant bounds the server's wait for its first process's answer).
WRAPPER=/opt/code-server/node_modules/code-server/out/node/wrapper.js
grep -q '^const timeoutInterval = 10000;' "$WRAPPER" || {
    echo "assemble: $WRAPPER no longer sets timeoutInterval = 10000 (a new code-server?): review this change" >&2
    exit 1
}
sed -i 's/^const timeoutInterval = 10000;/const timeoutInterval = 180000;/' "$WRAPPER"

# LibreOffice: Impress starts on an empty presentation, not on its "Select a Template" dialog
# (LibreOffice 7.4 keeps that switch in Impress/Misc/NewDoc/AutoPilot).
XCU=/home/user/.config/libreoffice/4/user/registrymodifications.xcu
ITEM='<item oor:path="/org.openoffice.Office.Impress/Misc/NewDoc"><prop oor:name="AutoPilot" oor:op="fuse"><value>false</value></prop></item>'
grep -q 'Misc/NewDoc' "$XCU" || sed -i "s|</oor:items>|$ITEM\n</oor:items>|" "$XCU"

chown -R user:user /home/user
rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /tmp/* 2>/dev/null || true
