import qrcode from 'qrcode-terminal';

/** Where the QR code is printed: anything with `write`, like `process.stdout`. */
export interface QrOutput {
  /** Writes the QR art and the scanning hint; the return value is ignored. */
  write(text: string): unknown;
}

/** Prints a WhatsApp pairing QR code as terminal art, with how to scan it. */
export function printQr(qr: string, output: QrOutput): void {
  qrcode.generate(qr, { small: true }, (art) => {
    output.write(
      `\nWhatsApp: scan this QR code with your phone (WhatsApp > Settings > Linked devices > Link a device).\n${art}\n`,
    );
  });
}
