/** placeholder */
package dev.muster.testing;
